export { gatedWrite, gatedWriteV2, gatedWriteV3 } from './gated-write';
