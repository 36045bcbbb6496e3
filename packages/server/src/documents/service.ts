import {
  type DbTransaction,
  type DocumentRecord,
  type DocumentRepository,
  MAX_DOCUMENT_ID_LENGTH,
} from '../db/document-repo.js'
import { isUeError, UeError } from '../shared/errors.js'
import { type ArticleBody, type CleanedArticle, withStoredEmbeds } from './clean.js'
import type { FileUrls } from './file-urls.js'

/** Who saves, reads or deletes a document. */
export interface DocumentActor {
  /** The signed-in user; null for a service credential without a user, or nobody (mode none). */
  user: string | null
  /** Admins, services and mode none may touch any document; a user only their own. */
  anyDocument: boolean
}

/** What a save answers: the cleaned article and the addresses it uses. */
export interface SavedArticle {
  /** The cleaned article, as a JSON string (`safeJson`): it was written off the event loop. */
  htmlJson: string
  /** This server's stored files it references, as the server hands their URLs out. */
  files: string[]
  /** Remote (http or https) images still in it, as written, as a JSON array (`safeJson`). */
  foreignJson: string
}

/** What a read answers: the references of the last save, and when it was. */
export interface DocumentView {
  id: string
  owner: string | null
  files: string[]
  /** ISO 8601. */
  savedAt: string
}

/**
 * What the host app's events add to a save and a delete: `within` runs inside the change's
 * transaction (an outbox row), `after` once it is committed.
 */
export interface DocumentHooks {
  saved?: {
    /** `article.foreign`: the remote images left in the saved article. */
    within?: (
      trx: DbTransaction,
      document: DocumentRecord,
      article: { foreign: readonly string[] },
    ) => Promise<void>
    after?: (document: DocumentRecord) => void | Promise<void>
  }
  deleted?: {
    within?: (trx: DbTransaction, document: DocumentRecord) => Promise<void>
    after?: (document: DocumentRecord) => void | Promise<void>
  }
}

export interface DocumentService {
  save(id: string, body: ArticleBody, actor: DocumentActor): Promise<SavedArticle>
  get(id: string, actor: DocumentActor): Promise<DocumentView>
  /** The view of the document as it was; UE_NOT_FOUND when there is none. */
  remove(id: string, actor: DocumentActor): Promise<DocumentView>
}

export function createDocumentService(o: {
  repo: DocumentRepository
  /** Reads and cleans an article and finds what it uses, off the event loop (`clean-pool.ts`). */
  clean(body: ArticleBody): Promise<CleanedArticle>
  urls: FileUrls
  hooks?: DocumentHooks
}): DocumentService {
  const { repo, urls } = o
  const view = (doc: DocumentRecord): DocumentView => ({
    id: doc.id,
    owner: doc.owner,
    files: doc.keys.map(urls.urlOf),
    savedAt: new Date(doc.savedAt).toISOString(),
  })
  return {
    async save(id, body, actor) {
      const { htmlJson, keys, foreign, foreignJson, embeds } = await o.clean(body)
      const within = o.hooks?.saved?.within
      const saved = await asMissing(
        repo.save(id, keys, {
          ...actor,
          within: within && ((trx, document) => within(trx, document, { foreign })),
        }),
      )
      await o.hooks?.saved?.after?.(saved)
      return {
        // An embed stays only for a file the index holds, as the save found it.
        htmlJson: withStoredEmbeds(htmlJson, embeds, new Set(saved.keys)),
        files: saved.keys.map(urls.urlOf),
        foreignJson,
      }
    },
    async get(id, actor) {
      const doc = await repo.get(id)
      if (doc === null || !(actor.anyDocument || (actor.user !== null && doc.owner === actor.user)))
        throw noSuchDocument()
      return view(doc)
    },
    async remove(id, actor) {
      const removed = await asMissing(
        repo.remove(id, { ...actor, within: o.hooks?.deleted?.within }),
      )
      if (removed === null) throw noSuchDocument()
      await o.hooks?.deleted?.after?.(removed)
      return view(removed)
    },
  }
}

/**
 * Another user's document is answered exactly as a missing one, so nobody learns which ids
 * exist and whose they are. (A save of such an id is refused, where a save of a free id
 * succeeds: that much an id that is taken always shows.)
 */
function noSuchDocument(): UeError {
  return new UeError('UE_NOT_FOUND', { detail: 'no such document' })
}

/** The repository's refusal of another user's document, as `noSuchDocument`. */
async function asMissing<T>(change: Promise<T>): Promise<T> {
  try {
    return await change
  } catch (e) {
    if (isUeError(e) && e.code === 'UE_FORBIDDEN') throw noSuchDocument()
    throw e
  }
}

/** The host's document id: 1-200 characters, none of them a control character. */
export function documentId(raw: string): string {
  const length = [...raw].length
  if (length < 1 || length > MAX_DOCUMENT_ID_LENGTH || /\p{Cc}/u.test(raw))
    throw new UeError('UE_VALIDATION_FAILED', {
      detail: 'a document id is 1-200 characters, without control characters',
    })
  return raw
}
