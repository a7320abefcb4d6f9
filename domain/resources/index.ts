import type { GatedWrite } from '../gate/writes';
import { bookEvent, deleteEvent, updateEvent } from './calendar';
import { createCustomer, updateCustomer } from './customers';
import { createMeetingIngest } from './meeting-ingests';
import { forget, remember } from './memories';
import { createProject, deleteProject, updateProject } from './projects';
import { createTask, deleteTask, updateTask } from './tasks';

/** Every gated write of every family, each declared in its family's file; the worker finds them here by name. */
export const everyGatedWrite: readonly GatedWrite[] = [
  createTask,
  updateTask,
  deleteTask,
  createProject,
  updateProject,
  deleteProject,
  createCustomer,
  updateCustomer,
  bookEvent,
  updateEvent,
  deleteEvent,
  createMeetingIngest,
  remember,
  forget,
];

const byName = new Map(everyGatedWrite.map((write) => [write.name, write]));

export function findGatedWrite(name: string): GatedWrite | undefined {
  return byName.get(name);
}
