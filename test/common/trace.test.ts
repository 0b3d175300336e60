/**
 * common/'s spans name their kinds with values of their own (so that naming one does not load OpenTelemetry's
 * API): each must be the number the API gives it, or a span would be exported as another kind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind as ApiSpanKind } from '@opentelemetry/api';
import { SpanKind } from '../../src/common/index.js';

test('each span kind is the number OpenTelemetry\'s API gives it, and there is one for each of its kinds', () => {
  const apiKinds = Object.fromEntries(Object.entries(ApiSpanKind).filter(([name]) => Number.isNaN(Number(name))));
  assert.deepEqual({ ...SpanKind }, apiKinds);
});
