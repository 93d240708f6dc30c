/** `npm run gateway`: a media gateway instance. */
import { runUntilSignal } from '../runtime/platform';

runUntilSignal(['gateway'], { allInOne: false });
