import { removeAnnounced } from '../../events/file-events.js'
import { formValues, readUrlEncodedForm } from '../../ingest/form.js'
import { toStorageKey } from '../../ingest/keys.js'
import { UeError } from '../../shared/errors.js'
import type { StorageKey } from '../../shared/types.js'
import type { ActionContext } from '../deps.js'

const MAX_FORM_BYTES = 16 * 1024

/**
 * The opt-in delete action: `url=<a URL this server returned>` in a url-encoded POST body.
 * Only the file's owner or an admin may delete it; the object goes first, then the row, so a
 * failure leaves a row to retry with. A URL that names nothing (already deleted) is SUCCESS.
 */
export async function handleDelete(ctx: ActionContext): Promise<{ state: 'SUCCESS' }> {
  const { files, events, storage, config, log } = ctx.deps
  const form = await readUrlEncodedForm(ctx.request, {
    maxBytes: MAX_FORM_BYTES,
    timeouts: config.http,
  })
  const values = formValues(form, 'url')
  if (values.length !== 1) throw new UeError('UE_VALIDATION_FAILED', { detail: 'one url' })
  const key = keyOf(values[0] as string, config.publicUrl, ctx.url)
  if (key === null) throw new UeError('UE_VALIDATION_FAILED', { detail: 'not a stored file URL' })
  const entry = await files.get(key)
  const { actor } = ctx
  const verdict = (v: string) =>
    log.info(
      { audit: 'delete', user: actor.user, address: actor.address, key, verdict: v },
      'delete',
    )
  if (entry === null) {
    verdict('absent')
    return { state: 'SUCCESS' }
  }
  const mayDelete = actor.admin || entry.owner === actor.user
  if (!mayDelete) {
    verdict('refused')
    throw new UeError('UE_FORBIDDEN')
  }
  await storage.delete(key)
  await removeAnnounced({ files, events, publicUrl: config.publicUrl }, key, 'user')
  verdict('deleted')
  return { state: 'SUCCESS' }
}

/** The storage key of a URL under `publicUrl` (absolute, or a path resolved like the editor). */
function keyOf(value: string, publicUrl: string, requestUrl: URL): StorageKey | null {
  let url: URL
  let base: URL
  try {
    url = new URL(value, requestUrl)
    base = new URL(publicUrl.endsWith('/') ? publicUrl : `${publicUrl}/`, requestUrl)
  } catch {
    return null
  }
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) return null
  if (url.search !== '' || url.hash !== '') return null
  let rest: string
  try {
    rest = decodeURIComponent(url.pathname.slice(base.pathname.length))
  } catch {
    return null
  }
  return toStorageKey(rest)
}
