/** Input fields every way of starting a call shares. */
import { z } from 'zod';

/** A call's variables ({{name}} in prompts and greetings; merged into tool arguments). */
export const CustomParameters = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'names are letters, digits and _'), z.union([z.string().max(2000), z.number()]))
  .refine((o) => Object.keys(o).length <= 50, 'at most 50 parameters')
  .default({});
