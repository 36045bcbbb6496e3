import assert from 'node:assert/strict'
import { loadConfig } from '../../src/config/load.js'
import { publicEditorConfig } from '../../src/config/public.js'
import { UeError } from '../../src/shared/errors.js'
import { describe, test } from '../helpers/test.js'

const KEY = 'sk-secret-model-key-0123456789'
const env = {
  UEDITOR_AI_BASE_URL: 'https://api.deepseek.com/v1',
  UEDITOR_AI_API_KEY: KEY,
  UEDITOR_AI_MODEL: 'deepseek-chat',
}

describe('AI settings', () => {
  test('AI is off by default and the editor config says nothing about it', () => {
    const cfg = loadConfig({ env: {} })
    assert.equal(cfg.ai.baseUrl, undefined)
    assert.equal(cfg.editor.ai, undefined)
  })

  test('the environment turns AI on and the browser gets the driver and URL, never the key', () => {
    const cfg = loadConfig({
      env: { ...env, UEDITOR_AI_MODELS: 'deepseek-reasoner', UEDITOR_AI_DAILY_TOKENS: '5000' },
    })
    assert.equal(cfg.ai.apiKey, KEY)
    assert.deepEqual(cfg.ai.models, ['deepseek-reasoner'])
    assert.equal(cfg.ai.dailyTokens, 5000)
    const browser = publicEditorConfig(cfg)
    assert.deepEqual(browser.ai, {
      driver: 'ModStart',
      driverConfig: { url: '/ueditor?action=ai' },
    })
    assert.ok(!JSON.stringify(browser).includes(KEY))
  })

  test('with an absolute publicUrl the dialog URL is absolute; ai.url wins when set', () => {
    const abs = loadConfig({ env, overrides: { publicUrl: 'https://ue.example.com/uploads/' } })
    assert.deepEqual(abs.editor.ai, {
      driver: 'ModStart',
      driverConfig: { url: 'https://ue.example.com/ueditor?action=ai' },
    })
    const own = loadConfig({
      env,
      overrides: { ai: { url: 'https://ue.example.com/api/ueditor?action=ask', driver: 'OpenAi' } },
    })
    assert.deepEqual(own.editor.ai, {
      driver: 'OpenAi',
      driverConfig: { url: 'https://ue.example.com/api/ueditor?action=ask' },
    })
  })

  test('a half-configured AI section is refused without echoing the key', () => {
    const { UEDITOR_AI_MODEL: _, ...noModel } = env
    assert.throws(
      () => loadConfig({ env: noModel }),
      (e: unknown) =>
        e instanceof UeError &&
        /set baseUrl, apiKey and model together/.test(e.message) &&
        !e.message.includes(KEY),
    )
  })

  test('a model key in the editor section, which every browser gets, is refused', () => {
    assert.throws(
      () =>
        loadConfig({
          env: {},
          overrides: { editor: { ai: { driver: 'OpenAi', driverConfig: { key: KEY } } } },
        }),
      (e: unknown) =>
        e instanceof UeError &&
        /editor\.ai\.driverConfig\.key/.test(e.message) &&
        !e.message.includes(KEY),
    )
  })
})
