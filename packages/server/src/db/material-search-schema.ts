import type { Kysely } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: runs inside a migration, on the schema of its time
type AnyDb = Kysely<any>

export async function materialSearchUp(_db: AnyDb): Promise<void> {}
