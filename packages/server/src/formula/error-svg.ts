/** A small SVG that shows one line of text in red on yellow, for refusals that are not TeX errors. */
export function errorSvg(message: string): string {
  const text = message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  // Rough width: wide glyphs (CJK) take a full em, others about half of one.
  const ems = [...message].reduce((n, c) => n + ((c.codePointAt(0) ?? 0) > 0x2e80 ? 1 : 0.55), 0)
  const width = Math.ceil(ems * 16) + 12
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="24" viewBox="0 0 ${width} 24" role="img">` +
    `<rect width="${width}" height="24" fill="yellow"/>` +
    `<text x="6" y="17" font-family="sans-serif" font-size="16" fill="red">${text}</text></svg>`
  )
}
