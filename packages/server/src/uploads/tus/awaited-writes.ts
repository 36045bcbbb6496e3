import type { DataStore } from '@tus/server'

/** The store's calls about one upload that must not see a write of it half done. */
const AFTER_WRITES = new Set<PropertyKey>(['getUpload', 'declareUploadLength', 'remove'])

const ignore = () => {}

/**
 * The store, except that a call about an upload first waits for a write of that upload still
 * running. When a PATCH body breaks off, tus lets go of the upload's lock as soon as the body
 * fails (its stream pipeline does not wait for the store's write), while the S3 store is still
 * sending the parts that arrived, several at a time. A HEAD then answered the parts stored so
 * far, and the resumed PATCH, checked against that offset, numbered its parts after one that
 * landed meanwhile: the object held some bytes twice and lacked others. Here the HEAD answers,
 * and the next write starts, once that write is over.
 */
export function writesAwaited<T extends DataStore>(store: T): T {
  const writing = new Map<string, Promise<unknown>>()
  const over = async (id: string) => {
    await writing.get(id)?.then(ignore, ignore)
  }
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'write')
        return (src: Parameters<DataStore['write']>[0], id: string, offset: number) => {
          const running = over(id).then(() => target.write(src, id, offset))
          writing.set(id, running)
          const done = () => {
            if (writing.get(id) === running) writing.delete(id)
          }
          running.then(done, done)
          return running
        }
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      if (AFTER_WRITES.has(prop))
        return async (id: string, ...rest: unknown[]) => {
          await over(id)
          return value.call(target, id, ...rest)
        }
      return value.bind(target)
    },
  })
}
