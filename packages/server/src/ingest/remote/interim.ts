import type { Socket } from 'node:net'

// A status line of an interim (1xx) answer other than 101, which switches protocols.
const INTERIM = /^HTTP\/1\.[01] 1(?!01)\d\d[ \r]/
const HEAD_END = Buffer.from('\r\n\r\n')
const MAX_INTERIM_HEAD = 16 * 1024

/**
 * Drops interim answers (`100 Continue`, `103 Early Hints`) that arrive before the final
 * answer on `socket`. HTTP clients must accept them even unasked, but undici's HTTP/1 parser
 * refuses an unsolicited `100` as a bad response, so an image server that sends one could not
 * be captured. Only the start of the stream is examined: the catcher sends one request per
 * connection, and once a final status line is seen every byte passes untouched.
 */
export function skipInterimResponses(socket: Socket): Socket {
  const read = socket.read.bind(socket)
  let head: Buffer = Buffer.alloc(0)
  let passing = false
  socket.read = (size?: number) => {
    if (passing) return read(size)
    const chunk: Buffer | null = read()
    if (chunk === null) {
      if (!socket.readableEnded || head.length === 0) return null
      passing = true
      return take()
    }
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk])
    while (INTERIM.test(head.subarray(0, 16).toString('latin1'))) {
      const end = head.indexOf(HEAD_END)
      if (end < 0) {
        if (head.length <= MAX_INTERIM_HEAD) return null
        break
      }
      head = head.subarray(end + HEAD_END.length)
    }
    if (head.length < 16 && !socket.readableEnded) return null
    passing = true
    return take()
  }
  const take = () => {
    const out = head
    head = Buffer.alloc(0)
    return out.length > 0 ? out : null
  }
  return socket
}
