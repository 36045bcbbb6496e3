import assert from 'node:assert/strict'
import { loadConfig } from '../../src/config/load.js'
import { describe, test } from '../helpers/test.js'

describe('formula settings', () => {
  test('the renderer is on by default with bounded limits', () => {
    const { formula, editor } = loadConfig({ env: {} })
    assert.equal(formula.enabled, true)
    assert.equal(formula.path, '/formula')
    assert.ok(formula.maxLength <= 5000 && formula.timeoutMs <= 10_000 && formula.maxMacros <= 1000)
    assert.deepEqual(editor.formulaConfig, {
      imageUrlTemplate: '/formula.svg?{}',
      editorMode: 'plain',
    })
  })

  test('environment variables switch the renderer off and set its budget', () => {
    const off = loadConfig({ env: { UEDITOR_FORMULA_ENABLED: 'false' } })
    assert.equal(off.formula.enabled, false)
    assert.equal(off.editor.formulaConfig, undefined)
    const tuned = loadConfig({
      env: { UEDITOR_FORMULA_TIMEOUT_MS: '800', UEDITOR_FORMULA_WORKERS: '3' },
    })
    assert.equal(tuned.formula.timeoutMs, 800)
    assert.equal(tuned.formula.workers, 3)
  })

  test('a template without {} and a renderer path that is not a path are refused', () => {
    assert.throws(
      () =>
        loadConfig({
          env: {},
          overrides: { editor: { formulaConfig: { imageUrlTemplate: 'x' } } },
        }),
      /formulaConfig\.imageUrlTemplate/,
    )
    assert.throws(
      () => loadConfig({ env: {}, overrides: { formula: { path: 'formula' } } }),
      /formula\.path/,
    )
  })
})
