import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { cents, createdAt, currencyCode, idInput, recordId, text, updatedAt } from '../kit/fields';
import { pageInput } from '../kit/pagination';
import { containsPattern, Filters, listPage } from '../kit/query';
import { loadRecord } from '../kit/rows';

// Products and services arrive by import (gatehouse import / seed); the API only reads them.

export const productSchema = z
  .object({
    id: recordId('product', 'prd', 'matches product_id on bookings and invoice lines; use it as {id} in /v1/products/{id}'),
    name: z.string().describe('The product or service name as sold'),
    sku: z.string().nullable().describe('Stock-keeping unit, or null when it has none'),
    description: z.string().nullable().describe('What the product or service is; null when none'),
    unit_price_cents: cents('The price of one unit'),
    currency: currencyCode,
    active: z.boolean().describe('Whether it is still sold; false for retired products'),
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .describe('A product or service the organization sells');

export const listProductsInput = z.strictObject({
  active: z.enum(['true', 'false']).optional().describe('true for products on sale, false for retired ones'),
  search: text({ max: 200 }).optional().describe('Matches name or SKU (case-insensitive)'),
  ...pageInput,
});
export const productIdInput = idInput('The product id, e.g. prd_01j…');

export function listProducts(db: Queryable, orgId: string, input: z.infer<typeof listProductsInput>) {
  const search = containsPattern(input.search);
  const filters = new Filters(orgId)
    .add('active = $?', input.active === undefined ? undefined : input.active === 'true')
    .add('(name ILIKE $? OR sku ILIKE $?)', search);
  return listPage(db, 'products', filters, input);
}

export const getProduct = (db: Queryable, orgId: string, productId: string) => loadRecord(db, 'products', 'product', orgId, productId);
