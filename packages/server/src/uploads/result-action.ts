import type { Actor } from '../auth/types.js'
import type { UploadOutcome, UploadRow } from '../db/upload-ledger.js'
import { CODES, UeError, type UeErrorCode } from '../shared/errors.js'
import type { Locale } from '../shared/messages.js'
import { messageFor } from '../shared/messages.js'
import type { Logger } from '../shared/types.js'
import { claimAndFinish, type UploadDeps } from './finish.js'

/** Longer than any id we make; a longer one is unknown without asking the database. */
const MAX_ID_LENGTH = 64

/**
 * `GET ?action=uploadresult&id=<upload id>`: what a resumable or direct upload came to, for its
 * owner only (anyone else gets the answer of an unknown id). The upload result, the refusal's
 * readable `state` and `code`, or `UE_UPLOAD_PENDING` while it arrives or is processed. A direct
 * upload never calls back: when its bytes are complete, this request runs the ending first.
 */
export function uploadResultAction(
  uploadDeps: UploadDeps,
): (ask: { id: string; actor: Actor; log: Logger }) => Promise<object> {
  return async ({ id, actor, log }) => {
    // The request's logger: the ending's lines carry its request id.
    const deps: UploadDeps = { ...uploadDeps, log }
    if (id === '' || id.length > MAX_ID_LENGTH) throw new UeError('UE_NOT_FOUND')
    let row = await deps.uploads.get(id)
    if (!row || row.owner !== actor.user) throw new UeError('UE_NOT_FOUND')
    if (row.state === 'receiving') {
      const bytes = await deps.unfinished.of(row.via)?.completed?.(row)
      const outcome = bytes ? await claimAndFinish(deps, row, bytes) : null
      if (outcome) return answerOf(outcome, deps.config.locale)
      row = (await deps.uploads.get(id)) ?? row
    }
    return answerOfRow(row, deps.config.locale)
  }
}

/** The editor's answer for a row: its outcome once settled, else pending. */
export function answerOfRow(row: UploadRow, locale: Locale): object {
  if (row.result && (row.state === 'done' || row.state === 'refused'))
    return answerOf(row.result, locale)
  return { state: messageFor(locale, 'UE_UPLOAD_PENDING'), code: 'UE_UPLOAD_PENDING', id: row.id }
}

/** The upload result as the editor reads it, or the refusal's readable state and its code. */
export function answerOf(outcome: UploadOutcome, locale: Locale): object {
  if ('state' in outcome) return outcome
  const known = outcome.code in CODES
  return {
    state: known ? messageFor(locale, outcome.code as UeErrorCode) : outcome.message,
    code: outcome.code,
  }
}
