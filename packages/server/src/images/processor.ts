import type { TempFile } from '../ingest/temp-file.js'

/** What one stored image gets, decided by the caller from its category and the editor config. */
export interface ImagePolicy {
  /** Longest side in pixels after processing (`imageCompressBorder`); absent means any. */
  maxLongSide?: number
  /** Whether the configured watermark, if any, is drawn on this image. */
  watermark: boolean
  /** Who sent it (user or address key): the decode queue takes turns between clients. */
  client?: string | undefined
}

/** A sniffed raster image: its dotted extension and MIME type as `decideContentType` found them. */
export interface ImageType {
  ext: string
  mime: string
}

export interface ProcessedImage {
  /** The bytes to store: a new spool file beside the input, or the input unchanged. */
  file: TempFile
  ext: string
  mime: string
}

export interface ImageProcessor {
  /** True for the sniffed extensions this processor checks and re-encodes. */
  handles(ext: string): boolean
  /**
   * Checks the header (pixel budget, frame count) before decoding, then re-encodes. Throws
   * `UE_IMAGE_TOO_LARGE` or `UE_CONTENT_MISMATCH`. The caller disposes the returned file.
   */
  process(file: TempFile, type: ImageType, policy: ImagePolicy): Promise<ProcessedImage>
  /** Images waiting for a decode slot now, where the processor queues them. */
  readonly waiting?: number
}

/** Stores images byte for byte (`images.enabled: false`). */
export const passthroughProcessor: ImageProcessor = {
  handles: () => false,
  process: async (file, type) => ({ file, ext: type.ext, mime: type.mime }),
}
