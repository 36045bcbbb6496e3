import { docImportAvailable, type ServerConfig } from '../config/load.js'
import type { ArticleBody, CleanedArticle } from '../documents/clean.js'
import { findSoffice } from '../shared/soffice-path.js'
import type { WordImporter } from './importer.js'

/** The Word import action's services (docs/word.md). */
export interface WordServices {
  importer: WordImporter
  /** HTML cleaned by the documents cleaner's rules, in its worker pool. */
  clean(html: string): Promise<string>
}

/**
 * The Word import action's services: the importer (its modules, mammoth and yauzl load with the
 * first import) and the documents cleaner's pool, shared with the documents API.
 */
export function createWordServices(
  config: ServerConfig,
  clean: (body: ArticleBody) => Promise<CleanedArticle>,
): WordServices {
  let importer: Promise<WordImporter> | undefined
  const open = () => {
    importer ??= import('./importer.js').then(({ createWordImporter }) => {
      const { word, images, uploads } = config
      return createWordImporter({
        soffice: docImportAvailable(config) ? findSoffice(images.metafiles.soffice) : null,
        tempDir: uploads.tempDir,
        limits: {
          maxUnpackedBytes: word.maxUnpackedBytes,
          maxRatio: word.maxRatio,
          maxEntries: word.maxEntries,
        },
        maxPictures: word.maxPictures,
        concurrency: word.concurrency,
        maxQueued: word.maxQueued,
        timeoutSeconds: word.timeoutSeconds,
      })
    })
    return importer
  }
  return {
    importer: {
      convert: async (path, head, ext, client) => (await open()).convert(path, head, ext, client),
    },
    async clean(html) {
      const article = await clean({ bytes: new TextEncoder().encode(html), json: false })
      return JSON.parse(article.htmlJson) as string
    },
  }
}
