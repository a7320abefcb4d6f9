import { createCustomer, customerIdInput, customerSchema, getCustomer, listCustomers, listCustomersInput, updateCustomer } from '../../domain/resources/customers';
import { gatedOperation, getOperation, listOperation } from './define';

export const customerOperations = [
  listOperation({
    name: 'customers.list',
    tool: 'search_customers',
    summary: 'List or search customers',
    description:
      'Lists customers, newest first; search by name, company or email, filter by tags. With updated_since: incremental sync, oldest change first, never missing a change. Paginated.',
    path: '/customers',
    input: listCustomersInput,
    item: customerSchema,
    handler: (input, { db, caller }) => listCustomers(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'customers.get',
    tool: 'get_customer',
    summary: 'Read a customer',
    description: 'One customer by id. The ETag header carries its version, for a safe update with If-Match.',
    path: '/customers/:id',
    input: customerIdInput,
    output: customerSchema,
    handler: (input, { db, caller }) => getCustomer(db, caller.organization.id, input.id),
  }),
  gatedOperation({
    write: createCustomer,
    tool: 'create_customer',
    summary: 'Add a customer',
    description: 'Adds a customer (name required) with company, email, phone, tags and notes.',
    method: 'POST',
    path: '/customers',
    output: customerSchema,
  }),
  gatedOperation({
    write: updateCustomer,
    tool: 'update_customer',
    summary: 'Update a customer',
    description: 'Changes the fields sent (null clears an optional field); If-Match refuses a stale update with 409.',
    method: 'PATCH',
    path: '/customers/:id',
    output: customerSchema,
  }),
];
