#!/usr/bin/env node
// Part of `npm run build`: saves the environment variables' table of `ueditor-server --help`
// (packages/server/src/standalone/env-help.ts), so `--help` does not load the config schema.
import { saveEnvHelp } from '../packages/server/dist/src/standalone/env-help.js'

await saveEnvHelp()
