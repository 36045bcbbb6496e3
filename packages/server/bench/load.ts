import autocannon from 'autocannon'

export interface LoadOptions {
  url: string
  connections: number
  /** Seconds to run; ignored when `amount` is set. */
  seconds?: number
  /** Requests to complete, then stop. */
  amount?: number
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: Buffer | string
  /** The path of each request from that connection's own state (for paging like a client). */
  nextPath?: (connection: Record<string, unknown>) => string
  /** A 2xx answer whose body fails this check counts as an error of the harness. */
  expect?: (body: string) => boolean
}

export interface LoadResult {
  requests: number
  seconds: number
  perSecond: number
  /** Latencies in milliseconds, as autocannon's histogram reports them. */
  p50Ms: number
  p99Ms: number
  maxMs: number
}

// Well past any answer the bench expects; a stall counts as a harness failure, not a figure.
const TIMEOUT_SECONDS = 120

/** Runs autocannon; any error, timeout, non-2xx or unexpected body makes the scenario fail loudly. */
export async function load(o: LoadOptions): Promise<LoadResult> {
  let unexpected = 0
  let sample = ''
  const { nextPath, expect } = o
  const result = await autocannon({
    url: o.url,
    connections: o.connections,
    ...(o.amount === undefined ? { duration: o.seconds ?? 10 } : { amount: o.amount }),
    method: o.method ?? 'GET',
    timeout: TIMEOUT_SECONDS,
    ...(o.headers ? { headers: o.headers } : {}),
    ...(o.body === undefined ? {} : { body: o.body }),
    ...(nextPath || expect
      ? {
          requests: [
            {
              ...(nextPath
                ? {
                    setupRequest: (req, context) => ({
                      ...req,
                      path: nextPath(context as Record<string, unknown>),
                    }),
                  }
                : {}),
              ...(expect
                ? {
                    onResponse: (status: number, body: string) => {
                      if (status < 300 && !expect(body)) {
                        unexpected++
                        sample ||= body.slice(0, 300)
                      }
                    },
                  }
                : {}),
            },
          ],
        }
      : {}),
  })
  const failed = result.errors + result.timeouts + result.non2xx + unexpected
  if (failed > 0) {
    const codes = JSON.stringify(result.statusCodeStats ?? {})
    throw new Error(
      `${o.method ?? 'GET'} ${o.url}: ${result.errors} errors, ${result.timeouts} timeouts, ` +
        `${result.non2xx} non-2xx (${codes}), ${unexpected} unexpected bodies ${sample}`,
    )
  }
  const requests = result.requests.total
  if (requests === 0) throw new Error(`${o.method ?? 'GET'} ${o.url}: no request completed`)
  return {
    requests,
    seconds: result.duration,
    perSecond: requests / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
  }
}

/** The warm-up before a measured load: `seconds` of it, then more until `requests` were answered. */
export async function warmUp(o: LoadOptions, seconds: number, requests: number): Promise<void> {
  if (seconds <= 0) return
  const answered = (await load({ ...o, seconds })).requests
  if (answered < requests) await load({ ...o, amount: requests - answered })
}
