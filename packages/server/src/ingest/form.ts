import { UeError } from '../shared/errors.js'
import { assertIdentityEncoding, type BodyTimeouts, readBodyBytes } from '../shared/request-body.js'

/** Reads an `application/x-www-form-urlencoded` body (catch sources, scrawl base64). */
export async function readUrlEncodedForm(
  request: Request,
  o: { maxBytes: number; timeouts: BodyTimeouts },
): Promise<URLSearchParams> {
  assertIdentityEncoding(request)
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase()
  if (type && type !== 'application/x-www-form-urlencoded' && type !== 'text/plain')
    throw new UeError('UE_BODY_INVALID', { detail: 'expected a url-encoded form' })
  const bytes = await readBodyBytes(request, o.maxBytes, o.timeouts)
  return new URLSearchParams(bytes.toString('utf8'))
}

/** Values of `name` and `name[]`, in order: the editor sends `source[]`, others send `source`. */
export function formValues(form: URLSearchParams, name: string): string[] {
  return [...form.entries()]
    .filter(([key]) => key === name || key === `${name}[]`)
    .map(([, value]) => value)
}
