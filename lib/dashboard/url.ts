import type { Settings } from '../settings.js';

/**
 * Where people open the dashboard: DASHBOARD_URL when the API sits behind a proxy or HTTPS,
 * else the API's own address (a wildcard listen address is reached through loopback).
 */
export function dashboardUrl(settings: Pick<Settings, 'host' | 'port' | 'dashboardUrl'>): string {
  if (settings.dashboardUrl) return settings.dashboardUrl.replace(/\/$/, '');
  const host = ['0.0.0.0', '::', ''].includes(settings.host) ? '127.0.0.1' : settings.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${settings.port}`;
}
