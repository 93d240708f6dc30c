/** `npm run api`: the REST API alone (needs DATABASE_URL; TEMPORAL_ADDRESS defaults to 127.0.0.1:7233). */
import { runUntilSignal } from '../runtime/platform';

runUntilSignal(['api'], { allInOne: false });
