import type { TestContext } from 'node:test'
import type { MetadataStore } from '../../src/db/types.js'

export type OpenNodes = () => Promise<[MetadataStore, MetadataStore]>

/**
 * Two stores over one database, as two nodes of a deployment see it: both migrated, both closed
 * when the test ends.
 */
export async function twoMigratedNodes(
  t: TestContext,
  openNodes: OpenNodes,
): Promise<[MetadataStore, MetadataStore]> {
  const [a, b] = await openNodes()
  t.after(async () => {
    await a.close()
    await b.close()
  })
  await a.migrate()
  await b.migrate()
  return [a, b]
}
