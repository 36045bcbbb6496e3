import { ENV_VAR_NAMES, type EnvVar, envVarNamed } from './env-vars.js'

/** Every environment variable the server reads, with the keys it sets, its kind and its `--help` line. */
export const ENV_VARS: readonly EnvVar[] = ENV_VAR_NAMES.map((name) => envVarNamed(name) as EnvVar)
