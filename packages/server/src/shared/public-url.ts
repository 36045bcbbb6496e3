/** The public URL of a stored key under `publicUrl`; keys hold only URL-safe characters. */
export function publicUrlOf(publicUrl: string, key: string): string {
  return `${publicUrl}${publicUrl.endsWith('/') ? '' : '/'}${key}`
}
