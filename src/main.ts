/** `npm start`: the whole platform on one machine (Temporal dev server, PostgreSQL, API, worker, gateway). */
import { runUntilSignal } from './runtime/platform';

runUntilSignal(['api', 'worker', 'gateway'], { allInOne: true });
