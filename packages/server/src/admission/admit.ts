import type { Actor } from '../auth/types.js'
import type { ServerConfig } from '../config/load.js'
import type { FileIndex } from '../db/types.js'
import type {
  UploadCategory,
  UploadLedger,
  UploadOutcome,
  UploadRow,
  UploadVia,
} from '../db/upload-ledger.js'
import { claimedExtension } from '../ingest/display-name.js'
import { UeError } from '../shared/errors.js'
import { type Metrics, noMetrics } from '../shared/metrics.js'
import { type UploadGate, uploadClientKey } from './gate.js'
import { checkQuota } from './quota.js'
import type { UploadRule } from './rules.js'

/** What admission counts with. */
export interface AdmissionDeps {
  config: ServerConfig
  files: Pick<FileIndex, 'usage'>
  uploads: UploadLedger
  /** The per-client rate, in-flight slots and free-space floor (`gate.ts`). */
  gate: UploadGate
  metrics?: Metrics | undefined
}

/** What one request asks to be admitted for. */
export interface AdmissionAsk {
  /**
   * The category's limits. Absent for the next request of an upload admitted before (a
   * resumable upload's `PATCH`): it takes an upload slot only, with no rate point.
   */
  rule?: UploadRule
  /** The file's name when the client gives it before the bytes: its extension must be allowed. */
  name?: string
  /** The size the client declares before the bytes: 1 byte up to the rule's limit. */
  size?: number
  /** An upload that outlives this request: its ledger row, opened here. */
  reserve?: Reservation
  /** Set when the client hangs up: a wait in the upload queue is given up at once. */
  signal?: AbortSignal | undefined
}

/**
 * The ledger row of an upload that outlives its request (resumable, direct): it reserves the
 * declared size (else the rule's whole limit) against the owner's quota until it is settled.
 */
export interface Reservation {
  via: UploadVia
  id: string
  /**
   * Where its unfinished bytes wait; a function runs once every limit has passed, just before
   * the row is written (a direct multipart upload is started there, for its upload id).
   */
  storeRef: string | (() => Promise<string>)
  /**
   * `elsewhere`: the bytes go straight to the bucket, never through this server, so the upload
   * holds no upload slot here; its open rows count against `limits.concurrentUploads` instead.
   */
  bytes?: 'here' | 'elsewhere'
}

/** An admitted request. */
export interface Ticket {
  readonly actor: Actor
  readonly rule: UploadRule | undefined
  /** The reservation's ledger row, when one was asked for. */
  readonly row: UploadRow | undefined
  /** Ends what the request holds: its upload slot. Call once it is answered; again does nothing. */
  end(): void
}

/** The one admission every way of uploading goes through, and the one ending of a reservation. */
export interface Admission {
  /**
   * Admits a request that brings (or opens) an upload, or throws its refusal, the same code
   * whatever the transport: the name's extension (`UE_TYPE_NOT_ALLOWED`), the declared size
   * (`UE_FILE_EMPTY`, `UE_FILE_TOO_LARGE`, `UE_VALIDATION_FAILED`), the per-client rate and
   * in-flight limits (`UE_RATE_LIMITED`), the free-space floor (`UE_STORAGE_FULL`), then the
   * reservation against the quota (`UE_QUOTA_EXCEEDED`). Nothing is held after a refusal.
   */
  admit(actor: Actor, ask: AdmissionAsk): Promise<Ticket>
  /**
   * Settles a reservation with what its upload came to (the file's own index row counts from
   * then on): false when the row was not being processed (another caller settled it).
   */
  settle(id: string, outcome: UploadOutcome): Promise<boolean>
}

/** The refusal of a category a resumable or direct upload names that no rule stores. */
export function unknownCategory(known: Iterable<string>): UeError {
  return new UeError('UE_VALIDATION_FAILED', {
    detail: `category must be one of ${[...known].join(', ')}`,
  })
}

export function createAdmission(deps: AdmissionDeps): Admission {
  const { config, uploads, gate } = deps
  const metrics = deps.metrics ?? noMetrics
  const exempt = new Set(config.limits.exemptUsers)

  /** A direct upload's place: one of the client's open rows of its way. */
  const checkOpenRows = async (actor: Actor, via: UploadVia) => {
    const { concurrentUploads } = config.limits
    const client = uploadClientKey(actor)
    if (client === undefined || concurrentUploads === 0) return
    if (actor.user !== null && exempt.has(actor.user)) return
    if ((await uploads.receivingOf(client, via)) >= concurrentUploads)
      throw new UeError('UE_RATE_LIMITED', { detail: 'concurrent uploads' })
  }

  const reserve = async (actor: Actor, ask: AdmissionAsk, r: Reservation, rule: UploadRule) => {
    const storeRef = typeof r.storeRef === 'string' ? r.storeRef : await r.storeRef()
    const now = Date.now()
    const row = await uploads.create({
      id: r.id,
      via: r.via,
      owner: actor.user,
      client: uploadClientKey(actor) ?? null,
      category: rule.category as UploadCategory,
      originalName: ask.name ?? '',
      // Without a declared size the whole limit is reserved; the ending refuses a larger file.
      size: ask.size ?? rule.maxSize,
      storeRef,
      createdAt: now,
      expiresAt: now + config.uploads.expiryMs,
    })
    try {
      // Counted with the row in: two reservations at once on two nodes cannot both fit.
      await checkQuota(deps, actor.user, 0)
    } catch (e) {
      await uploads.remove(row.id)
      throw e
    }
    return row
  }

  return {
    async admit(actor, ask) {
      const { rule, reserve: r } = ask
      if (rule) checkDeclared(rule, ask)
      const elsewhere = r?.bytes === 'elsewhere'
      const release = await gate.admit(actor, ask.signal, {
        rate: rule !== undefined,
        slot: !elsewhere,
      })
      const ended = elsewhere ? () => {} : metrics.uploadStarted()
      let done = false
      const end = () => {
        if (done) return
        done = true
        ended()
        release()
      }
      try {
        if (r && elsewhere) await checkOpenRows(actor, r.via)
        if (r && !rule) throw new UeError('UE_INTERNAL', { detail: 'a reservation needs a rule' })
        const row = r && rule ? await reserve(actor, ask, r, rule) : undefined
        return { actor, rule, row, end }
      } catch (e) {
        end()
        throw e
      }
    },
    settle: (id, outcome) => uploads.settle(id, 'state' in outcome ? 'done' : 'refused', outcome),
  }
}

/** What the client declared before its bytes, against the rule. */
function checkDeclared(rule: UploadRule, ask: AdmissionAsk): void {
  if (ask.name !== undefined && !rule.allowFiles.includes(claimedExtension(ask.name)))
    throw new UeError('UE_TYPE_NOT_ALLOWED')
  const { size } = ask
  if (size === undefined) return
  if (!Number.isSafeInteger(size) || size < 0)
    throw new UeError('UE_VALIDATION_FAILED', {
      detail: 'the declared size must be a whole number',
    })
  if (size === 0) throw new UeError('UE_FILE_EMPTY')
  if (size > rule.maxSize) throw new UeError('UE_FILE_TOO_LARGE')
}
