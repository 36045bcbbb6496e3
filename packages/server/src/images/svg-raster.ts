import sharp from 'sharp'

export interface RasterOptions {
  /** Pixels per CSS inch: 96 draws the SVG at its own size, 192 at twice that. */
  density: number
  /** Largest width × height of the PNG. */
  maxPixels: number
  timeoutSeconds: number
}

/**
 * Draws an SVG the server made itself (never an uploaded one) as a PNG. The pixel cap is
 * checked from the SVG's declared size before anything is drawn.
 */
export async function svgToPng(svg: string, o: RasterOptions): Promise<Buffer> {
  return sharp(Buffer.from(svg), { density: o.density, limitInputPixels: o.maxPixels })
    .timeout({ seconds: o.timeoutSeconds })
    .png()
    .toBuffer()
}
