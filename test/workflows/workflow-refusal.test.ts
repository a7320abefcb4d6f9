import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { toActivityFailure } from '../../activities';
import { AppError } from '../../domain/kit/errors';
import { refusalOf } from '../../workflows/refusal';

// How the workflow reads an activity's failure: the typed refusal of the contract, the form activities of the
// previous version raised (while a deployment rolls over), and anything else as no refusal at all.

describe('the refusal an activity failed with, as the workflow reads it', () => {
  it('a refusal raised by the activities: its code, message and details', () => {
    const failure = toActivityFailure(new AppError('conflict', 'task t changed', { current_version: 3 }));
    expect(refusalOf(failure)).toEqual({ code: 'conflict', message: 'task t changed', details: { current_version: 3 } });
  });

  it('a refusal raised by an activity of the previous version (AppError:<code>)', () => {
    const failure = ApplicationFailure.create({ type: 'AppError:not_found', message: 'task t was not found', nonRetryable: true, details: [{ id: 't' }] });
    expect(refusalOf(failure)).toEqual({ code: 'not_found', message: 'task t was not found', details: { id: 't' } });
  });

  it('anything else is not a refusal: the write could not be done', () => {
    expect(refusalOf(ApplicationFailure.create({ type: 'ReviewNotApproved', message: 'no' }))).toBeUndefined();
    expect(refusalOf(new Error('connection lost'))).toBeUndefined();
    expect(refusalOf(undefined)).toBeUndefined();
  });
});
