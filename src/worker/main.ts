/** `npm run worker`: a Temporal worker for call workflows and activities. */
import { runUntilSignal } from '../runtime/platform';

runUntilSignal(['worker'], { allInOne: false });
