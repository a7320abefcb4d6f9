// The record's diff lives in web/src/lib, shared with the decision link's page (features/decide).
export { RecordDiff } from '../../lib/record-diff';
