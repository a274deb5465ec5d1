import type { RouteDefinition } from '../route.js';
import { meRoutes } from './me.js';

/** Every route module of the API, one line each. The OpenAPI document lists exactly these. */
export const allRoutes: RouteDefinition[] = [...meRoutes];
