/**
 * Collects sightings of refused proposals while a module is decoded: one entry per feature with how
 * often it was seen and where first, so each becomes one problem that points at a real place.
 */
import type { RefusedFeature } from './problem-codes.js';

export interface FeatureSighting {
  feature: RefusedFeature;
  count: number;
  first: string;
}

export class FeatureLog {
  private readonly seen = new Map<RefusedFeature, FeatureSighting>();

  note(feature: RefusedFeature, where: string): void {
    const entry = this.seen.get(feature);
    if (entry) entry.count++;
    else this.seen.set(feature, { feature, count: 1, first: where });
  }

  has(feature: RefusedFeature): boolean {
    return this.seen.has(feature);
  }

  sightings(): FeatureSighting[] {
    return [...this.seen.values()];
  }
}
