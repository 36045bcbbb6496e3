import type Sharp from 'sharp'

let loaded: Promise<typeof Sharp> | undefined

/**
 * sharp, loaded (with libvips) by the first image or formula PNG drawn rather than at start:
 * tens of MB a server that stores no image never needs. libvips runs with one thread and no
 * cache, set once as it loads.
 */
export function loadSharp(): Promise<typeof Sharp> {
  loaded ??= import('sharp').then(({ default: sharp }) => {
    sharp.cache(false)
    sharp.concurrency(1)
    return sharp
  })
  return loaded
}
