export { configSchema, type Config, type ConfigInput } from './schema.js';
export { loadConfig, requireUpstream, type ConfigFlags, type LoadConfigOptions, type LoadedConfig } from './load.js';
