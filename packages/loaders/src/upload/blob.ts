/**
 * Whether a value is a Blob (or File), whatever window made it. The editor's dialogs run in
 * their own iframe, so their files are Blobs of another realm, which `instanceof Blob` here
 * refuses; XHR, FormData and `slice` take them all the same. So the test is the shape: the
 * class tag, or a Blob's size, type and methods.
 */
export function isBlob(v: unknown): v is Blob {
  if (typeof v !== 'object' || v === null) return false
  const tag = Object.prototype.toString.call(v)
  if (tag === '[object Blob]' || tag === '[object File]') return true
  const b = v as Partial<Record<keyof Blob, unknown>>
  return (
    typeof b.size === 'number' &&
    typeof b.type === 'string' &&
    typeof b.slice === 'function' &&
    (typeof b.stream === 'function' || typeof b.arrayBuffer === 'function')
  )
}
