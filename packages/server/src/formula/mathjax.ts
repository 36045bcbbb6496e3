import { MathJaxNewcmFont } from '@mathjax/mathjax-newcm-font/js/svg.js'
import type { LiteElement } from '@mathjax/src/js/adaptors/lite/Element.js'
import { liteAdaptor } from '@mathjax/src/js/adaptors/liteAdaptor.js'
import { RegisterHTMLHandler } from '@mathjax/src/js/handlers/html.js'
import { TeX } from '@mathjax/src/js/input/tex.js'
import { mathjax } from '@mathjax/src/js/mathjax.js'
import { SVG } from '@mathjax/src/js/output/svg.js'
// Loads font ranges (accents, double-struck, …) from the font package on first use.
import '@mathjax/src/js/util/asyncLoad/esm.js'
// TeX packages: each import registers one. Deliberately absent: html (\href, \class, \style,
// \cssId), texhtml (raw HTML), action (tooltips, toggles), require and autoload (load code on
// demand), setoptions (would let a formula raise the limits below), unicode, textmacros.
import '@mathjax/src/js/input/tex/base/BaseConfiguration.js'
import '@mathjax/src/js/input/tex/ams/AmsConfiguration.js'
import '@mathjax/src/js/input/tex/amscd/AmsCdConfiguration.js'
import '@mathjax/src/js/input/tex/newcommand/NewcommandConfiguration.js'
import '@mathjax/src/js/input/tex/boldsymbol/BoldsymbolConfiguration.js'
import '@mathjax/src/js/input/tex/braket/BraketConfiguration.js'
import '@mathjax/src/js/input/tex/cancel/CancelConfiguration.js'
import '@mathjax/src/js/input/tex/cases/CasesConfiguration.js'
import '@mathjax/src/js/input/tex/centernot/CenternotConfiguration.js'
import '@mathjax/src/js/input/tex/color/ColorConfiguration.js'
import '@mathjax/src/js/input/tex/enclose/EncloseConfiguration.js'
import '@mathjax/src/js/input/tex/extpfeil/ExtpfeilConfiguration.js'
import '@mathjax/src/js/input/tex/gensymb/GensymbConfiguration.js'
import '@mathjax/src/js/input/tex/mathtools/MathtoolsConfiguration.js'
import '@mathjax/src/js/input/tex/mhchem/MhchemConfiguration.js'
import '@mathjax/src/js/input/tex/physics/PhysicsConfiguration.js'
import '@mathjax/src/js/input/tex/textcomp/TextcompConfiguration.js'
import '@mathjax/src/js/input/tex/units/UnitsConfiguration.js'
import '@mathjax/src/js/input/tex/upgreek/UpgreekConfiguration.js'

export const TEX_PACKAGES = [
  'base',
  'ams',
  'amscd',
  'newcommand',
  'boldsymbol',
  'braket',
  'cancel',
  'cases',
  'centernot',
  'color',
  'enclose',
  'extpfeil',
  'gensymb',
  'mathtools',
  'mhchem',
  'physics',
  'textcomp',
  'units',
  'upgreek',
]

export interface TexLimits {
  /** Macro substitutions per formula (MathJax's `maxMacros`). */
  maxMacros: number
  /** Largest expanded input, in characters (MathJax's `maxBuffer`). */
  maxBuffer: number
}

/** The formula asked for something a standalone image may not hold (a link, a style URL, …). */
export class UnsafeFormulaError extends Error {
  override readonly name = 'UnsafeFormulaError'
}

export type TexResult = { ok: true; svg: string } | { ok: false; message: string; svg: string }

// The rules MathJax keeps in its page stylesheet that change how a lone SVG looks: error
// colours and table rules. Nothing here can fetch anything.
const STYLE = [
  'g[data-mml-node="merror"]>g{fill:red;stroke:red}',
  'g[data-mml-node="merror"]>rect[data-background]{fill:yellow;stroke:none}',
  'line[data-line],rect[data-frame]{stroke-width:70px;fill:none}',
  '.mjx-dashed{stroke-dasharray:140}',
  '.mjx-dotted{stroke-linecap:round;stroke-dasharray:0,140}',
].join('')

const ELEMENTS = new Set([
  'svg',
  'g',
  'path',
  'rect',
  'line',
  'polygon',
  'polyline',
  'ellipse',
  'circle',
  'text',
  'use',
  'defs',
  'title',
  'a',
  'style',
])

/** A TeX-to-SVG converter with fixed packages and limits; synchronous work, run it in a worker. */
export function createTexRenderer(limits: TexLimits): (tex: string) => Promise<TexResult> {
  const adaptor = liteAdaptor()
  RegisterHTMLHandler(adaptor)
  let texError: string | undefined
  const tex = new TeX({
    packages: TEX_PACKAGES,
    maxMacros: limits.maxMacros,
    maxBuffer: limits.maxBuffer,
    // biome-ignore lint/suspicious/noExplicitAny: MathJax types the jax loosely here
    formatError: (jax: any, err: { message: string }) => {
      texError = err.message
      return jax.formatError(err)
    },
  })
  // One picture per formula: no automatic breaking of inline math into several <svg> pieces.
  const svg = new SVG({
    fontData: MathJaxNewcmFont,
    fontCache: 'local',
    linebreaks: { inline: false },
  })
  const doc = mathjax.document('', { InputJax: tex, OutputJax: svg })

  return async (input) => {
    texError = undefined
    const node = await mathjax.handleRetriesFor(() => doc.convert(input, { display: true }))
    const parts = adaptor.childNodes(node)
    if (parts.length !== 1) throw new Error(`MathJax drew ${parts.length} parts`)
    const root = parts[0] as LiteElement
    const message = texError
    clean(root)
    const style = adaptor.node('style', {}, [adaptor.text(STYLE)])
    adaptor.insert(style, adaptor.firstChild(root))
    const out = `<?xml version="1.0" encoding="UTF-8"?>\n${adaptor.serializeXML(root)}`
    return message === undefined ? { ok: true, svg: out } : { ok: false, message, svg: out }
  }

  /**
   * Drops what a lone image does not need (the TeX copied into `data-latex`, styles meant for
   * the page) and refuses anything outside the shapes MathJax draws: no script, no foreign
   * content, no link or reference leaving the document.
   */
  function clean(el: LiteElement): void {
    const kind = adaptor.kind(el)
    if (!ELEMENTS.has(kind)) throw new UnsafeFormulaError(`unexpected element <${kind}>`)
    for (const { name, value } of adaptor.allAttributes(el)) {
      const lower = name.toLowerCase()
      if (lower === 'data-latex' || lower === 'data-mjx-error') adaptor.removeAttribute(el, name)
      else if (lower.startsWith('on')) throw new UnsafeFormulaError(`unexpected attribute ${name}`)
      else if ((lower === 'href' || lower === 'xlink:href') && !value.startsWith('#'))
        throw new UnsafeFormulaError('link leaving the image')
      else if (/url\s*\(|@import|javascript:/i.test(value))
        throw new UnsafeFormulaError(`unexpected value in ${name}`)
    }
    for (const child of adaptor.childNodes(el))
      if (adaptor.kind(child) !== '#text') clean(child as LiteElement)
  }
}
