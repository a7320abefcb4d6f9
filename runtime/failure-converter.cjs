// Temporal's failure converter for encrypted payloads (runtime/payload-codec.ts): a failure's message and stack
// trace, which may quote what was written ("no project prj_…"), are moved into a payload that the codec encrypts.
// Loaded by path, in the api's client, in the worker and in the workflow sandbox (the SDK bundles it), so plain
// CommonJS that needs no TypeScript loader.
const { DefaultFailureConverter } = require('@temporalio/common');

exports.failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
