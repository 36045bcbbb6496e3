import { type Kysely, type Selectable, sql } from '#kysely'
import type { UploadResult } from '../shared/types.js'
import { guarded } from './errors.js'
import type { DbSchema, UploadsTable } from './schema.js'

export type UploadVia = UploadsTable['via']
export type UploadState = UploadsTable['state']
/** The categories a resumable or direct upload may declare. */
export type UploadCategory = UploadsTable['category']
export const UPLOAD_CATEGORIES: readonly UploadCategory[] = ['image', 'video', 'audio', 'file']

/** What a settled upload came to: the editor's upload result, or the refusal. */
export type UploadOutcome = UploadResult | { code: string; message: string }

/** One row of the ledger. */
export interface UploadRow {
  id: string
  via: UploadVia
  owner: string | null
  client: string | null
  category: UploadCategory
  originalName: string
  /** Declared bytes: reserved against the owner's quota until the row is settled. */
  size: number
  /** Where the unfinished bytes are: the tus store's id, or the pending object's key. */
  storeRef: string
  state: UploadState
  /** Null until settled. */
  result: UploadOutcome | null
  /** Milliseconds since the epoch. */
  createdAt: number
  expiresAt: number
}

export type NewUpload = Omit<UploadRow, 'state' | 'result' | 'createdAt'> & { createdAt?: number }

/**
 * Resumable and direct uploads from creation until settled, in the database so every node of a
 * deployment sees the same rows: whichever node receives the last byte, exactly one runs the
 * ending (`claim`), and the owner's quota counts what is still on its way (`reserved`).
 */
export interface UploadLedger {
  /** Adds a row in state 'receiving'; fails with UE_INDEX_FAILED when the id exists. */
  create(upload: NewUpload): Promise<UploadRow>
  get(id: string): Promise<UploadRow | null>
  /**
   * 'receiving' → 'processing' in one conditional update: true for exactly one caller, on any
   * node; false when the row is gone or another caller claimed it first.
   */
  claim(id: string): Promise<boolean>
  /** 'processing' → 'done' or 'refused' with its outcome; false when the row is not processing. */
  settle(id: string, state: 'done' | 'refused', result: UploadOutcome): Promise<boolean>
  /**
   * Rows whose bytes may be removed at `now`: 'receiving' ones past `expiresAt`, 'processing'
   * ones an hour past it (a node died while finishing), settled ones past it too (only their
   * answer is left). Oldest first, at most `limit`.
   */
  expired(now: number, limit?: number): Promise<UploadRow[]>
  remove(id: string): Promise<boolean>
  /**
   * Declared bytes of `owner`'s unsettled rows ('receiving' and 'processing'), `except` one
   * (the row being settled, whose stored size is counted in its place).
   */
  reserved(owner: string, except?: string): Promise<number>
  /** How many uploads of one way `client` has still receiving bytes: its open uploads. */
  receivingOf(client: string, via: UploadVia): Promise<number>
}

/** How long a row may stay 'processing' past its expiry before the sweep takes it. */
export const PROCESSING_GRACE_MS = 60 * 60 * 1000

export function createUploadLedger(db: Kysely<DbSchema>): UploadLedger {
  return {
    create: (upload) =>
      guarded(async () => {
        const createdAt = upload.createdAt ?? Date.now()
        await db
          .insertInto('uploads')
          .values({
            id: upload.id,
            via: upload.via,
            owner: upload.owner,
            client: upload.client,
            category: upload.category,
            originalName: upload.originalName,
            size: upload.size,
            storeRef: upload.storeRef,
            state: 'receiving',
            result: null,
            createdAt,
            expiresAt: upload.expiresAt,
          })
          .execute()
        return { ...upload, createdAt, state: 'receiving', result: null }
      }),
    get: (id) =>
      guarded(async () => {
        const row = await db
          .selectFrom('uploads')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirst()
        return row ? rowOf(row) : null
      }),
    claim: (id) =>
      guarded(async () => {
        const out = await db
          .updateTable('uploads')
          .set({ state: 'processing' })
          .where('id', '=', id)
          .where('state', '=', 'receiving')
          .executeTakeFirst()
        return Number(out.numUpdatedRows) === 1
      }),
    settle: (id, state, result) =>
      guarded(async () => {
        const out = await db
          .updateTable('uploads')
          .set({ state, result: JSON.stringify(result) })
          .where('id', '=', id)
          .where('state', '=', 'processing')
          .executeTakeFirst()
        return Number(out.numUpdatedRows) === 1
      }),
    expired: (now, limit = 100) =>
      guarded(async () => {
        const rows = await db
          .selectFrom('uploads')
          .selectAll()
          .where((eb) =>
            eb.or([
              eb.and([eb('state', '!=', 'processing'), eb('expiresAt', '<=', now)]),
              eb.and([
                eb('state', '=', 'processing'),
                eb('expiresAt', '<=', now - PROCESSING_GRACE_MS),
              ]),
            ]),
          )
          .orderBy('expiresAt')
          .orderBy('id')
          .limit(limit)
          .execute()
        return rows.map(rowOf)
      }),
    remove: (id) =>
      guarded(async () => {
        const out = await db.deleteFrom('uploads').where('id', '=', id).executeTakeFirst()
        return Number(out.numDeletedRows) === 1
      }),
    reserved: (owner, except) =>
      guarded(async () => {
        let q = db
          .selectFrom('uploads')
          .where('owner', '=', owner)
          .where('state', 'in', ['receiving', 'processing'])
        if (except !== undefined) q = q.where('id', '!=', except)
        const { bytes } = await q
          .select(sql<number | string | bigint | null>`sum(size)`.as('bytes'))
          .executeTakeFirstOrThrow()
        return Number(bytes ?? 0)
      }),
    receivingOf: (client, via) =>
      guarded(async () => {
        const { n } = await db
          .selectFrom('uploads')
          .where('client', '=', client)
          .where('via', '=', via)
          .where('state', '=', 'receiving')
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
          .executeTakeFirstOrThrow()
        return Number(n)
      }),
  }
}

function rowOf(row: Selectable<UploadsTable>): UploadRow {
  return {
    ...row,
    // PostgreSQL answers a bigint as a string.
    size: Number(row.size),
    createdAt: Number(row.createdAt),
    expiresAt: Number(row.expiresAt),
    result: row.result === null ? null : (JSON.parse(row.result) as UploadOutcome),
  }
}
