// Every migration, in order. The list is explicit so start-up never depends on a directory scan.
import { Migration20261121235208 } from './Migration20261121235208.js';

export const migrationsList = [{ name: 'Migration20261121235208', class: Migration20261121235208 }];
