/**
 * platform/volumes/: the host directories behind /volume/tmp and /volume/data — where they are, how they are
 * removed out of every guest's reach, and the quotas across calls.
 */
export { VolumeQuotas, type QuotaVolume } from './volume-quota.js';
export { Volumes } from './volumes.js';
