/** What the browser may send and read on the tus route (CORS), besides the defaults. */
export const TUS_REQUEST_HEADERS = [
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Offset',
  'Upload-Defer-Length',
  'Upload-Concat',
]
export const TUS_EXPOSED_HEADERS = [
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Expires',
  'Location',
]
