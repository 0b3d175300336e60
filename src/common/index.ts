/** common/: what every layer may use and that belongs to none. */
export { createLogger, defaultLogLevel, silentLogger, type Logger, type LoggerOptions, type LogLevel, type LogFields } from './log.js';
export { systemClock, isoAt, type Clock } from './clock.js';
