import { getInvoice, invoiceIdInput, invoiceSchema, listInvoices, listInvoicesInput } from '../../domain/resources/invoices';
import { getOperation, listOperation } from './define';

// Invoices arrive by import (gatehouse import / seed); the API only reads them.

export const invoiceOperations = [
  listOperation({
    name: 'invoices.list',
    tool: 'list_invoices',
    summary: 'List invoices',
    description: 'Invoices, newest first; filter by status, customer, issue dates and due date. Paginated.',
    path: '/invoices',
    input: listInvoicesInput,
    item: invoiceSchema,
    handler: (input, { db, caller }) => listInvoices(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'invoices.get',
    tool: 'get_invoice',
    summary: 'Read an invoice',
    description: 'One invoice with its lines.',
    path: '/invoices/:id',
    input: invoiceIdInput,
    output: invoiceSchema,
    handler: (input, { db, caller }) => getInvoice(db, caller.organization.id, input.id),
  }),
];
