import type { Limiters } from '../limits/limiter.js'

export interface ClientRate {
  /** Takes one render from `client`'s count; false when it is used up. */
  take(client: string): Promise<boolean>
}

/** `perMinute` renders per client and minute, on every node together (limits/limiter.ts). 0: no limit. */
export function createClientRate(limiters: Limiters, perMinute: number): ClientRate {
  if (perMinute === 0) return { take: async () => true }
  const limit = limiters.limit({ name: 'formula', points: perMinute, seconds: 60 })
  return { take: async (client) => (await limit.take(client)) === 0 }
}
