import assert from 'node:assert/strict'
import type { CompiledQuery } from '#kysely'
import {
  countedPageQuery,
  documentPageQuery,
  pageQuery,
  rowAtQuery,
} from '../../src/db/listing-sql.js'
import {
  literalPageQuery,
  termPageQuery,
  termSearchQuery,
} from '../../src/db/material-search-sql.js'
import { describe, test } from '../helpers/test.js'

/** Every statement with a `limit` or `offset` that a listing or a search page sends. */
function pageStatements(postgres: boolean): [string, CompiledQuery<unknown>][] {
  const legs = [
    { category: 'image' as const, byExt: true },
    { category: 'file' as const, byExt: false },
  ]
  const anchor = { createdAt: 1_700_000_000_000, id: 7 }
  return [
    ['one leg', pageQuery(postgres, undefined, legs.slice(0, 1), ['.png'], anchor, 21)],
    ['two legs', pageQuery(postgres, { kind: 'owned' }, legs, ['.png'], undefined, 21)],
    ['deep walk', rowAtQuery(postgres, undefined, ['image'], ['.png'], 500, true, { from: 0 })],
    ['document page', documentPageQuery(postgres, undefined, 'doc', ['image'], ['.png'], 40, 20)],
    ['term page', termPageQuery(postgres, '标题', [1, 2], 3, 40, 20)],
    ['literal page', literalPageQuery(postgres, '活动标题', [1], undefined, 40, 20)],
  ]
}

describe('limits and offsets of the listing and search statements', () => {
  test('on SQLite none is a bare parameter, so a cached statement is not planned again when bound', () => {
    for (const [name, query] of pageStatements(false)) {
      assert.match(query.sql, /\b(limit|offset) \? \+ 0/, name)
      assert.doesNotMatch(query.sql, /\b(limit|offset) \?(?! \+ 0)/, `${name}: ${query.sql}`)
    }
  })

  test('on PostgreSQL they stay plain numbered parameters, as its named statements were planned with', () => {
    const anchor = { createdAt: 1_700_000_000_000, id: 7 }
    const oneStatement: [string, CompiledQuery<unknown>][] = [
      ['counted page', countedPageQuery(['*'], undefined, ['image'], ['.png'], anchor, 21)],
      ['search in one statement', termSearchQuery('标题', [1, 2], 40, 20)],
    ]
    for (const [name, query] of [...pageStatements(true), ...oneStatement]) {
      assert.match(query.sql, /\b(limit|offset) \$\d+\b/, name)
      assert.doesNotMatch(query.sql, /\+ 0/, `${name}: ${query.sql}`)
    }
  })

  test('the value is bound as given, once per limit or offset', () => {
    const query = termPageQuery(false, '标题', undefined, undefined, 40, 20)
    assert.deepEqual(query.parameters, ['标题', 60, 20, 40])
  })
})
