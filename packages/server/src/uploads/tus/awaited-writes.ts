import type { DataStore } from '@tus/server'

/** The store's calls about one upload that must not see a write of it half done. */
const AFTER_WRITES = new Set<PropertyKey>(['getUpload', 'declareUploadLength', 'remove'])

const ignore = () => {}

/**
 * The store, except that a call about an upload first waits for a write of that upload still
 * running. tus lets go of an upload's lock as soon as a PATCH body breaks off, without waiting
 * for the store's write of what arrived: the S3 store is then still sending parts, several at a
 * time and in no set order. A HEAD answered in that time counted the parts stored so far (not
 * always the first ones), and the resumed PATCH numbered its parts after the last one stored,
 * so the object was assembled from other bytes. Here a HEAD answers once that write is over,
 * and the next write starts after it.
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
