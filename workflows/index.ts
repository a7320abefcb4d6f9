export { gatedWrite, gatedWriteV2 } from './gated-write';
