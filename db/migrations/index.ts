// Every migration, in order. The list is explicit so start-up never depends on a directory scan.
import { Migration20261122000402 } from './Migration20261122000402.js';
import { Migration20261123121629 } from './Migration20261123121629.js';
import { Migration20261123131134 } from './Migration20261123131134.js';
import { Migration20261123145056 } from './Migration20261123145056.js';
import { Migration20261123145138 } from './Migration20261123145138.js';
import { Migration20261123151226 } from './Migration20261123151226.js';
import { Migration20261123162915 } from './Migration20261123162915.js';
import { Migration20261125164327 } from './Migration20261125164327.js';
import { Migration20261125170000 } from './Migration20261125170000.js';
import { Migration20261127120748 } from './Migration20261127120748.js';
import { Migration20261127121123 } from './Migration20261127121123.js';
import { Migration20261127145341 } from './Migration20261127145341.js';
import { Migration20261128080000 } from './Migration20261128080000.js';
import { Migration20261128100000 } from './Migration20261128100000.js';
import { Migration20261128110000 } from './Migration20261128110000.js';
import { Migration20261128120000 } from './Migration20261128120000.js';
import { Migration20261128130701 } from './Migration20261128130701.js';
import { Migration20261128140000 } from './Migration20261128140000.js';
import { Migration20261128150000 } from './Migration20261128150000.js';
import { Migration20261129045327 } from './Migration20261129045327.js';

export const migrationsList = [{ name: 'Migration20261122000402', class: Migration20261122000402 }, { name: 'Migration20261123121629', class: Migration20261123121629 }, { name: 'Migration20261123131134', class: Migration20261123131134 }, { name: 'Migration20261123145056', class: Migration20261123145056 }, { name: 'Migration20261123145138', class: Migration20261123145138 }, { name: 'Migration20261123151226', class: Migration20261123151226 }, { name: 'Migration20261123162915', class: Migration20261123162915 }, { name: 'Migration20261125164327', class: Migration20261125164327 }, { name: 'Migration20261125170000', class: Migration20261125170000 }, { name: 'Migration20261127120748', class: Migration20261127120748 }, { name: 'Migration20261127121123', class: Migration20261127121123 }, { name: 'Migration20261127145341', class: Migration20261127145341 }, { name: 'Migration20261128080000', class: Migration20261128080000 }, { name: 'Migration20261128100000', class: Migration20261128100000 }, { name: 'Migration20261128110000', class: Migration20261128110000 }, { name: 'Migration20261128120000', class: Migration20261128120000 }, { name: 'Migration20261128130701', class: Migration20261128130701 }, { name: 'Migration20261128140000', class: Migration20261128140000 }, { name: 'Migration20261128150000', class: Migration20261128150000 }, { name: 'Migration20261129045327', class: Migration20261129045327 }];
