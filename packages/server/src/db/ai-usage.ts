import { type Kysely, sql } from 'kysely'
import { guarded } from './errors.js'
import type { DbSchema } from './schema.js'

/**
 * Tokens each AI caller used per UTC day, in the database: every node that shares it counts
 * against the same day, and a restart forgets nothing.
 */
export interface AiUsageStore {
  /** Tokens `subject` used on `day` (`YYYY-MM-DD`, UTC); 0 when none. */
  used(subject: string, day: string): Promise<number>
  /** Adds `tokens` to `subject`'s day in one statement, so concurrent nodes never lose a count. */
  add(subject: string, day: string, tokens: number): Promise<void>
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
    forgetBefore: (day) =>
      guarded(async () => {
        const result = await db.deleteFrom('aiUsage').where('day', '<', day).executeTakeFirst()
        return Number(result.numDeletedRows)
      }),
  }
}
