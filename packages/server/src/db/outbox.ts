import { type Kysely, sql } from '#kysely'
import { guarded } from './errors.js'
import { isPostgres } from './identity.js'
import type { DbSchema, EventOutboxTable } from './schema.js'
import type { DbTransaction } from './types.js'

/** An event as the outbox keeps it. */
export interface OutboxEntry {
  eventId: string
  type: string
  /** What it is about: events of one subject are delivered one at a time, in outbox order. */
  subject: string
  /** The body as it is sent and signed. */
  body: string
  /** Milliseconds since the epoch. */
  createdAt: number
}

/** A row a node has claimed: it delivers it until `leaseUntil`. */
export interface ClaimedEntry extends OutboxEntry {
  id: number
  /** This attempt's number, from 1. */
  attempt: number
  leaseUntil: number
}

export interface ClaimOptions {
  /** Who claims: a node's own name, so only its own settlement counts. */
  owner: string
  now: number
  leaseMs: number
  limit: number
}

/**
 * The events waiting for their webhook delivery, shared by every node on the database. A row is
 * written in the transaction of the change it announces (`record`), claimed by one node at a
 * time with a lease (`claim`), and deleted once delivered or given up.
 */
export interface Outbox {
  /** Writes the event inside `trx`: it exists exactly when the change commits. */
  record(trx: DbTransaction, entry: OutboxEntry): Promise<void>
  /**
   * Up to `limit` rows that are due and held by nobody, and have no earlier row of the same
   * subject still waiting, leased to `owner` in one statement. On PostgreSQL rows another
   * node is claiming at the same moment are skipped (`FOR UPDATE SKIP LOCKED`); on SQLite
   * the one writer at a time makes the conditional update the claim.
   */
  claim(o: ClaimOptions): Promise<ClaimedEntry[]>
  /** Delivered, or given up: the row goes. */
  remove(id: number): Promise<void>
  /** A failed attempt: due again at `dueAt`, free for any node from then. */
  retryAt(id: number, o: { owner: string; dueAt: number; error: string }): Promise<void>
  /** How many events are waiting for their delivery. */
  waiting(): Promise<number>
}

export function createOutbox(db: Kysely<DbSchema>): Outbox {
  const postgres = isPostgres(db)
  return {
    record: (trx, entry) => guarded(() => record(trx, entry)),
    claim: (o) => guarded(() => claim(db, postgres, o)),
    remove: (id) =>
      guarded(async () => void (await db.deleteFrom('eventOutbox').where('id', '=', id).execute())),
    retryAt: (id, o) =>
      guarded(async () => {
        await db
          .updateTable('eventOutbox')
          .set({
            dueAt: o.dueAt,
            leaseUntil: 0,
            leaseOwner: null,
            lastError: o.error.slice(0, 500),
          })
          .where('id', '=', id)
          .where('leaseOwner', '=', o.owner)
          .execute()
      }),
    waiting: () =>
      guarded(async () => {
        const { n } = await db
          .selectFrom('eventOutbox')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow()
        return Number(n)
      }),
  }
}

async function record(trx: DbTransaction, entry: OutboxEntry): Promise<void> {
  await trx
    .insertInto('eventOutbox')
    .values({ ...entry, dueAt: entry.createdAt, leaseUntil: 0, attempts: 0 })
    .execute()
}

async function claim(
  db: Kysely<DbSchema>,
  postgres: boolean,
  o: ClaimOptions,
): Promise<ClaimedEntry[]> {
  const due = db
    .selectFrom('eventOutbox as o')
    .select('o.id')
    .where('o.dueAt', '<=', o.now)
    .where('o.leaseUntil', '<=', o.now)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('eventOutbox as earlier')
            .select('earlier.id')
            .whereRef('earlier.subject', '=', 'o.subject')
            .whereRef('earlier.id', '<', 'o.id'),
        ),
      ),
    )
    .orderBy('o.id')
    .limit(Math.max(1, Math.floor(o.limit)))
    .$if(postgres, (q) => q.forUpdate().skipLocked())
  const rows = await db
    .updateTable('eventOutbox')
    .set({
      leaseOwner: o.owner,
      leaseUntil: o.now + o.leaseMs,
      attempts: sql<number>`attempts + 1`,
    })
    .where('id', 'in', due)
    .returningAll()
    .execute()
  return rows.map(toClaimed).sort((a, b) => a.id - b.id)
}

// PostgreSQL answers bigint columns as strings.
function toClaimed(row: { [K in keyof EventOutboxTable]: unknown }): ClaimedEntry {
  return {
    id: Number(row.id),
    eventId: String(row.eventId),
    type: String(row.type),
    subject: String(row.subject),
    body: String(row.body),
    createdAt: Number(row.createdAt),
    attempt: Number(row.attempts),
    leaseUntil: Number(row.leaseUntil),
  }
}
