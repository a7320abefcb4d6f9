import { getProduct, listProducts, listProductsInput, productIdInput, productSchema } from '../../domain/resources/products';
import { getOperation, listOperation } from './define';

// Products arrive by import (gatehouse import / seed); the API only reads them.

export const productOperations = [
  listOperation({
    name: 'products.list',
    tool: 'list_products',
    summary: 'List products',
    description: 'Products and services, newest first; filter active or retired, search name and SKU. Paginated.',
    path: '/products',
    input: listProductsInput,
    item: productSchema,
    handler: (input, { db, caller }) => listProducts(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'products.get',
    tool: 'get_product',
    summary: 'Read a product',
    description: 'One product or service with its price.',
    path: '/products/:id',
    input: productIdInput,
    output: productSchema,
    handler: (input, { db, caller }) => getProduct(db, caller.organization.id, input.id),
  }),
];
