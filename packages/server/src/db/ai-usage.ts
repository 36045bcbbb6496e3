import { type Kysely, sql } from '#kysely'
import { guarded } from './errors.js'
import type { DbSchema } from './schema.js'

/**
 * Tokens each AI caller used per UTC day, in the database: every node that shares it counts
 * against the same day, and a restart forgets nothing.
 */
export interface AiUsageStore {
  /** Tokens `subject` used on `day` (`YYYY-MM-DD`, UTC); 0 when none. */
  used(subject: string, day: string): Promise<number>
  /**
   * Adds `tokens` to `subject`'s day in one statement, so concurrent nodes never lose a count. A
   * negative count gives back the unused part of a reservation.
   */
  add(subject: string, day: string, tokens: number): Promise<void>
  /**
   * Adds `tokens` to `subject`'s day only if the day's count stays at or under `budget`, in one
   * statement (a conditional upsert), so calls on every node reserve against the same count.
   * False: it did not fit, and nothing was added.
   */
  reserve(subject: string, day: string, tokens: number, budget: number): Promise<boolean>
  /** Removes the days before `day`; returns how many rows went. */
  forgetBefore(day: string): Promise<number>
}

export function createAiUsageStore(db: Kysely<DbSchema>): AiUsageStore {
  return {
    used: (subject, day) =>
      guarded(async () => {
        const row = await db
          .selectFrom('aiUsage')
          .select('tokens')
          .where('subject', '=', subject)
          .where('day', '=', day)
          .executeTakeFirst()
        // PostgreSQL answers a bigint as a string.
        return Number(row?.tokens ?? 0)
      }),
    add: (subject, day, tokens) =>
      guarded(async () => {
        await db
          .insertInto('aiUsage')
          .values({ subject, day, tokens })
          .onConflict((c) =>
            c
              .columns(['subject', 'day'])
              .doUpdateSet({ tokens: sql<number>`ai_usage.tokens + excluded.tokens` }),
          )
          .execute()
      }),
    reserve: (subject, day, tokens, budget) =>
      guarded(async () => {
        if (tokens > budget) return false
        const result = await db
          .insertInto('aiUsage')
          .values({ subject, day, tokens })
          .onConflict((c) =>
            c
              .columns(['subject', 'day'])
              .doUpdateSet({ tokens: sql<number>`ai_usage.tokens + excluded.tokens` })
              .where(sql<number>`ai_usage.tokens + excluded.tokens`, '<=', budget),
          )
          .executeTakeFirst()
        return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
      }),
    forgetBefore: (day) =>
      guarded(async () => {
        const result = await db.deleteFrom('aiUsage').where('day', '<', day).executeTakeFirst()
        return Number(result.numDeletedRows)
      }),
  }
}
