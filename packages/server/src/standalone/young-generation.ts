import { setFlagsFromString } from 'node:v8'

/*
 * V8 doubles its young generation (two semi-spaces) each time a collection finds most of it
 * still alive, up to 16 MB a space. What a start allocates mostly stays alive (module code,
 * schemas, the index's statements), so a start alone grew it to 32 MB, kept for good however
 * little the server then served: a third of a fresh server's heap. The standalone server holds
 * it at its first size until it is ready; a load grows it afterwards as before. A growth factor
 * given on Node's command line or in NODE_OPTIONS is left alone.
 */
const FLAG = '--semi-space-growth-factor'
/** V8's own default (Node 20 to 24). */
const DEFAULT_FACTOR = 2

/** Holds the young generation at its size now; the function returned lets it grow again. */
export function holdYoungGeneration(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): () => void {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) =>
    arg.replaceAll('_', '-').startsWith(FLAG),
  )
  if (given) return () => {}
  setFlagsFromString(`${FLAG}=1`)
  return () => setFlagsFromString(`${FLAG}=${DEFAULT_FACTOR}`)
}
