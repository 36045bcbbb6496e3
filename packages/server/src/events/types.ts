import { randomUUID } from 'node:crypto'

/** Why a stored file went. */
export type FileDeletedReason =
  /** The editor's delete action, by its owner or an admin. */
  | 'user'
  /** `files reconcile --fix`: its row had no object any more. */
  | 'reconcile'
  /** The orphan clean-up: no document referenced it past the grace period. */
  | 'orphan'
  /** An upload undone because two uploads at once took its owner past the quota. */
  | 'quota'
  /** A picture of a Word import that was refused after it was stored (docs/word.md). */
  | 'import'

/** What each event says (docs/events.md). */
export interface EventData {
  fileStored: {
    key: string
    /** The URL the editor was given. */
    url: string
    category: string
    size: number
    mime: string
    /** Null when stored without a signed-in user. */
    owner: string | null
    originalName: string
  }
  fileDeleted: {
    key: string
    url: string
    owner: string | null
    reason: FileDeletedReason
  }
  documentSaved: {
    id: string
    owner: string | null
    /** URLs of this server's stored files the document references. */
    files: string[]
    /** Remote images still in it. */
    foreign: string[]
  }
  documentDeleted: {
    id: string
    owner: string | null
  }
}

export type EventType = keyof EventData

export const EVENT_TYPES: readonly EventType[] = [
  'fileStored',
  'fileDeleted',
  'documentSaved',
  'documentDeleted',
]

/** One event, as a handler gets it and as the webhook's JSON body carries it. */
export interface UeditorEventOf<T extends EventType> {
  /** Unique: a receiver that gets an event twice knows it by this. */
  id: string
  type: T
  /** When the change happened: ISO 8601, UTC. */
  timestamp: string
  data: EventData[T]
}

export type UeditorEvent = { [T in EventType]: UeditorEventOf<T> }[EventType]

/**
 * The `on` option of `createUeditorServer`: called once the change has committed, without
 * being awaited; a handler that throws or rejects is logged and counted, never answered.
 */
export type EventHandlers = {
  [T in EventType]?: (event: UeditorEventOf<T>) => void | Promise<void>
}

export function newEvent<T extends EventType>(type: T, data: EventData[T]): UeditorEventOf<T> {
  return { id: randomUUID(), type, timestamp: new Date().toISOString(), data }
}

/** Events of one subject (a stored file, a document) are delivered one at a time, in order. */
export function subjectOf(event: UeditorEvent): string {
  switch (event.type) {
    case 'fileStored':
    case 'fileDeleted':
      return `file:${event.data.key}`
    case 'documentSaved':
    case 'documentDeleted':
      return `document:${event.data.id}`
  }
}
