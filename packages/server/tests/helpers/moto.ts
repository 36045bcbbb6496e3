import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'

/** moto answers any key pair; these only have to be the same on both sides. */
const CREDENTIALS = { accessKeyId: 'MOTO', secretAccessKey: 'MOTO-SECRET' }

export interface RunningMoto {
  endpoint: string
  client: S3Client
  /** Creates a bucket with a fresh name and returns the name. */
  createBucket(): Promise<string>
  /** The server's environment variables for storing in `bucket` of this server. */
  storageEnv(bucket: string): Record<string, string>
  close(): Promise<void>
}

export type MotoLane = { moto: RunningMoto } | { unavailable: string }

/**
 * moto_server (Python's AWS mock) on 127.0.0.1 with a port of its choosing: its S3 does
 * multipart uploads (create, upload part, list parts, abort, complete) the way AWS does.
 * Unavailable when `moto_server` is not installed (`pip install "moto[server]"`).
 */
export async function startMoto(): Promise<MotoLane> {
  const found = spawnSync('moto_server', ['--help'], { stdio: 'ignore' })
  if (found.error || found.status !== 0)
    return {
      unavailable: 'moto_server is not installed; install it with pip install "moto[server]"',
    }
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  // The after() hook closes it; this catches a test process that ends without it.
  const onExit = () => child.kill('SIGKILL')
  process.once('exit', onExit)
  const endpoint = await listeningOn(child)
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { ...CREDENTIALS },
  })
  return {
    moto: {
      endpoint,
      client,
      async createBucket() {
        const name = `ue-${randomBytes(6).toString('hex')}`
        await client.send(new CreateBucketCommand({ Bucket: name }))
        return name
      },
      storageEnv: (bucket) => ({
        UEDITOR_STORAGE: 's3',
        UEDITOR_S3_BUCKET: bucket,
        UEDITOR_S3_REGION: 'us-east-1',
        UEDITOR_S3_ENDPOINT: endpoint,
        UEDITOR_S3_FORCE_PATH_STYLE: 'true',
        UEDITOR_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        UEDITOR_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      }),
      async close() {
        client.destroy()
        process.removeListener('exit', onExit)
        if (child.exitCode !== null || child.signalCode !== null) return
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      },
    },
  }
}

/** Locally the moto lane is skipped with the reason; with CI=true it must run, so it fails. */
export function skipOrFailMoto(t: TestContext, reason: string): void {
  if (process.env.CI === 'true') throw new Error(`moto_server required on CI: ${reason}`)
  t.skip(reason)
}

/** The address moto prints once it listens (`Running on http://127.0.0.1:PORT`), within 20 s. */
function listeningOn(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let said = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`moto_server did not start within 20 s:\n${said}`))
    }, 20_000)
    let started = false
    // Read on after the start too (its request log), so the pipes never fill up.
    const read = (chunk: Buffer) => {
      if (started) return
      said += chunk
      const m = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(said)
      if (m?.[1]) {
        started = true
        clearTimeout(timer)
        resolve(m[1])
      }
    }
    child.stdout?.on('data', read)
    child.stderr?.on('data', read)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`moto_server exited with ${code}:\n${said}`))
    })
  })
}
